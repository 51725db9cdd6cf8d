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
//! ([`ScalarValue::IntervalMonthDayNano`]) and `TRY_CAST` an
//! [`ExprKind::TryCast`] node.
//!
//! Whatever sqlparser accepts but Broadhead does not support (subqueries,
//! arrays, `INTERVAL … TO …`, window functions, …) is a [`ParseError`] pointing at the
//! construct; no input makes the parser panic.

use arrow_schema::DataType;
use sqlparser::ast::{
    self, BinaryOperator, CastKind, CeilFloorKind, DateTimeField, DuplicateTreatment, FunctionArg,
    FunctionArgExpr, FunctionArgumentClause, FunctionArguments, ObjectNamePart, SelectItem,
    Spanned, TrimWhereField, UnaryOperator, Value, ValueWithSpan,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{self, Token, TokenWithSpan, Tokenizer};

use crate::error::ParseError;
use crate::expr::{self, Expr, ExprKind, Span};
use crate::scalar::ScalarValue;
use crate::types::{from_sql_type, sql_type_name};

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

/// Broadhead's rewrites of sqlparser's tokens, which [`parse_expr`] applies before
/// parsing: `#` as PostgreSQL's XOR, `EXTRACT` fields checked with a caret, `BETWEEN
/// SYMMETRIC`. A caller that parses whole statements with sqlparser (the CLI's
/// `broadhead sql`) applies them too, so the expressions in a statement read as
/// `parse_expr` reads them.
pub fn rewrite_tokens(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    rewrite_symmetric(rewrite_extract_field(rewrite_sharp(tokens)))
}

/// The generic dialect has no infix `#` (PostgreSQL's bitwise XOR); a `#` token
/// there can only be that operator (a `#` that starts a word is part of a name), so
/// it becomes a custom operator, which sqlparser reads with the precedence of
/// PostgreSQL's other operators.
fn rewrite_sharp(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    for t in &mut tokens {
        if t.token == Token::Sharp {
            t.token = Token::CustomBinaryOperator("#".into());
        }
    }
    tokens
}

/// Makes the field of `EXTRACT(field FROM x)` a plain word, so that sqlparser
/// keeps it as written, with its position: an unknown field is then an error
/// pointing at it (sqlparser gives its own fields, `JULIAN`, no position).
fn rewrite_extract_field(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    for (k, w) in significant.windows(3).enumerate() {
        let [extract, open, field] = [w[0], w[1], w[2]];
        // `WEEK(MONDAY)` is sqlparser's own syntax: left alone.
        let called = significant
            .get(k + 3)
            .is_some_and(|&i| tokens[i].token == Token::LParen);
        if is_word(&tokens[extract].token, Keyword::EXTRACT)
            && tokens[open].token == Token::LParen
            && !called
        {
            if let Token::Word(word) = &mut tokens[field].token {
                if word.quote_style.is_none() {
                    word.keyword = Keyword::NoKeyword;
                }
            }
        }
    }
    tokens
}

/// The quote style of the marker `BETWEEN SYMMETRIC` wraps its lower bound in: a
/// one-argument call of a function whose name no input can spell (the generic
/// dialect's tokenizer never quotes a name with brackets). It must be a style
/// sqlparser can print: its error messages display the token they stopped at.
const SYMMETRIC_MARK: char = '[';

fn is_word(t: &Token, keyword: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

/// sqlparser reads neither `BETWEEN SYMMETRIC` nor `BETWEEN ASYMMETRIC`. This drops
/// `ASYMMETRIC` (the default) and rewrites `BETWEEN SYMMETRIC low AND` to
/// `BETWEEN ␀(low) AND`, a [marker](SYMMETRIC_MARK) call that [`convert`] turns
/// back into a symmetric BETWEEN.
///
/// The lower bound ends, as sqlparser reads it, at the first operator that binds
/// less tightly than `BETWEEN` outside parentheses and `CASE … END`; when that is not
/// `AND`, the keyword is left alone so that sqlparser reports the syntax error. As in
/// PostgreSQL, where both words are reserved, `BETWEEN symmetric AND 5` still names a
/// column.
fn rewrite_symmetric(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant = |i: usize| !matches!(tokens[i].token, Token::Whitespace(_));
    let next_after = |i: usize| (i + 1..tokens.len()).find(|&j| significant(j));
    let mut prev_between = false;
    let mut drop = vec![false; tokens.len()];
    let mut open_at = vec![false; tokens.len()];
    let mut close_before = vec![0usize; tokens.len()];
    for i in 0..tokens.len() {
        if !significant(i) {
            continue;
        }
        let t = &tokens[i].token;
        let after_between = prev_between;
        prev_between = is_word(t, Keyword::BETWEEN);
        let symmetric = is_word(t, Keyword::SYMMETRIC);
        if !after_between || !(symmetric || is_word(t, Keyword::ASYMMETRIC)) {
            continue;
        }
        let Some(first) = next_after(i) else { continue };
        if is_word(&tokens[first].token, Keyword::AND) {
            continue; // a column named symmetric
        }
        if !symmetric {
            drop[i] = true;
            continue;
        }
        if let Some(end) = lower_bound_end(&tokens, first) {
            drop[i] = true;
            open_at[i] = true;
            close_before[end] += 1;
        }
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.into_iter().enumerate() {
        for _ in 0..close_before[i] {
            out.push(TokenWithSpan::new(Token::RParen, t.span));
        }
        if open_at[i] {
            let name = Token::Word(tokenizer::Word {
                value: "symmetric".into(),
                quote_style: Some(SYMMETRIC_MARK),
                keyword: Keyword::NoKeyword,
            });
            out.push(TokenWithSpan::new(name, t.span));
            out.push(TokenWithSpan::new(Token::LParen, t.span));
        }
        if !drop[i] {
            out.push(t);
        }
    }
    out
}

/// The index of the `AND` that ends the lower bound of a BETWEEN starting at token
/// `first`, if it ends at an `AND`.
fn lower_bound_end(tokens: &[TokenWithSpan], first: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(first) {
        let t = &t.token;
        match t {
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::Word(w) if w.keyword == Keyword::CASE && w.quote_style.is_none() => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => depth = depth.checked_sub(1)?,
            Token::Word(w) if w.keyword == Keyword::END && w.quote_style.is_none() => {
                depth = depth.checked_sub(1)?
            }
            _ if depth > 0 || j == first => {}
            _ if is_word(t, Keyword::AND) => return Some(j),
            Token::Word(w)
                if w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::OR
                            | Keyword::XOR
                            | Keyword::IS
                            | Keyword::IN
                            | Keyword::NOT
                            | Keyword::BETWEEN
                            | Keyword::LIKE
                            | Keyword::ILIKE
                            | Keyword::SIMILAR
                            | Keyword::REGEXP
                            | Keyword::RLIKE
                            | Keyword::THEN
                            | Keyword::WHEN
                            | Keyword::ELSE
                            | Keyword::AS
                    ) =>
            {
                return None
            }
            Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Spaceship
            | Token::Comma
            | Token::SemiColon
            | Token::EOF => return None,
            _ => {}
        }
    }
    None
}

/// The lower bound of a `BETWEEN SYMMETRIC`, if `low` is the marker call
/// [`rewrite_symmetric`] wrapped it in.
fn symmetric_low(low: &ast::Expr) -> Option<&ast::Expr> {
    let ast::Expr::Function(f) = low else {
        return None;
    };
    match (f.name.0.as_slice(), &f.args) {
        ([ObjectNamePart::Identifier(ident)], FunctionArguments::List(list))
            if ident.quote_style == Some(SYMMETRIC_MARK) =>
        {
            match list.args.as_slice() {
                [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => Some(x),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Fails unless the whole input was consumed.
fn expect_end(parser: &Parser<'_>) -> Result<(), ParseError> {
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

fn error(message: impl Into<String>, span: Span) -> ParseError {
    ParseError {
        message: message.into(),
        span,
    }
}

/// Converts a sqlparser span (1-based, end one past the last character) to ours.
fn span(s: tokenizer::Span) -> Span {
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
fn parse_failure(e: ParserError, source: &str, parser: &Parser<'_>) -> ParseError {
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
fn from_parser_error(e: ParserError, source: &str) -> ParseError {
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
fn node_span(e: &ast::Expr, cx: Cx, children: &[&Expr]) -> Span {
    let own = shallow_span(e, cx);
    if own.is_known() {
        own
    } else {
        children.iter().fold(Span::NONE, |s, c| s.union(c.span))
    }
}

/// The span sqlparser computes for a node, if that is safe.
fn shallow_span(e: &ast::Expr, cx: Cx) -> Span {
    match e {
        ast::Expr::Identifier(ident) => span(ident.span),
        ast::Expr::Value(v) => span(v.span),
        _ if cx.shallow => span(e.span()),
        _ => Span::NONE,
    }
}

/// Shortens the SQL text of an unsupported node for an error message.
fn describe(node: &impl std::fmt::Display) -> String {
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

fn unsupported(e: &ast::Expr, cx: Cx) -> ParseError {
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

/// Drops a sqlparser tree without recursion (chains of infix operators make
/// trees as deep as they are long, and dropping recurses).
fn dismantle(root: ast::Expr) {
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
        } => {
            let args = [
                Some(expr.as_ref()),
                Some(pattern.as_ref()),
                escape_char.as_deref(),
            ];
            let call = special_call(e, "similar_to", args.into_iter().flatten(), d)?;
            Ok(if *negated { call.not() } else { call })
        }
        E::Extract { field, expr, .. } => extract(e, field, expr, d),
        E::Interval(interval) => self::interval(e, interval, d),
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

/// The leaves, the errors, and the function-like special forms.
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
        E::Ceil { expr, field } | E::Floor { expr, field } => {
            let name = if matches!(e, E::Ceil { .. }) {
                "ceil"
            } else {
                "floor"
            };
            let scale = match field {
                CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => None,
                CeilFloorKind::Scale(v) => Some(literal(v, false)?),
                CeilFloorKind::DateTimeField(_) => return Err(unsupported(e, d)),
            };
            let args = [Some(expr.as_ref())].into_iter().flatten();
            let mut call = special_call(e, name, args, d)?;
            if let (ExprKind::Call { args, .. }, Some(scale)) = (&mut call.kind, scale) {
                args.push(scale);
            }
            return Ok(call);
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            if substring_from.is_none() && substring_for.is_some() {
                return Err(unsupported(e, d));
            }
            let args = [
                Some(expr.as_ref()),
                substring_from.as_deref(),
                substring_for.as_deref(),
            ];
            return special_call(e, "substr", args.into_iter().flatten(), d);
        }
        E::Trim {
            expr,
            trim_where,
            trim_what,
            trim_characters,
        } => {
            let name = match trim_where {
                None | Some(TrimWhereField::Both) => "btrim",
                Some(TrimWhereField::Leading) => "ltrim",
                Some(TrimWhereField::Trailing) => "rtrim",
            };
            let args = std::iter::once(expr.as_ref())
                .chain(trim_what.as_deref())
                .chain(trim_characters.iter().flatten());
            return special_call(e, name, args, d);
        }
        E::Position { expr, r#in } => {
            return special_call(e, "strpos", [r#in.as_ref(), expr.as_ref()].into_iter(), d)
        }
        E::CompoundIdentifier(_) => "qualified column names are not supported",
        E::InSubquery { .. } => "IN (subquery) is not supported",
        E::InUnnest { .. } => "IN UNNEST is not supported",
        E::RLike { .. } => "RLIKE/REGEXP is not supported",
        _ => return Err(unsupported(e, d)),
    };
    Err(error(message, shallow_span(e, d)))
}

fn too_deep(e: &ast::Expr, cx: Cx) -> ParseError {
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

fn literal(v: &ValueWithSpan, negative: bool) -> Result<Expr, ParseError> {
    Ok(Expr::new(ExprKind::Literal(value(v, negative)?)).with_span(span(v.span)))
}

/// A call of a function-like special form (`CEIL`, `SUBSTRING`, `TRIM`).
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

fn unary(e: &ast::Expr, op: &UnaryOperator, x: &ast::Expr, cx: Cx) -> Result<Expr, ParseError> {
    match (op, x) {
        (
            UnaryOperator::Minus,
            ast::Expr::Value(
                v @ ValueWithSpan {
                    value: Value::Number(..),
                    ..
                },
            ),
        ) => literal(v, true),
        // `~` binds as PostgreSQL's other operators, not as sqlparser's minus sign.
        (UnaryOperator::BitwiseNot, _) => operator_chain(e, cx),
        (UnaryOperator::Minus, _) if needs_reassociation(e) => operator_chain(e, cx),
        (UnaryOperator::Minus, x) => Ok(convert(x, cx.deeper())?.neg()),
        (UnaryOperator::Plus, x) => convert(x, cx),
        (UnaryOperator::Not, x) => Ok(convert(x, cx.deeper())?.not()),
        _ => Err(unsupported(e, cx)),
    }
}

fn is_null(x: &ast::Expr, negated: bool, d: Cx) -> Result<Expr, ParseError> {
    let x = convert(x, d)?;
    Ok(if negated {
        x.is_not_null()
    } else {
        x.is_null()
    })
}

fn unary_call(name: &str, x: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    let x = convert(x, d)?;
    let at = x.span;
    Ok(Expr::call(name, vec![x]).with_span(at))
}

fn binary_call(name: &str, a: &ast::Expr, b: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    let (a, b) = (convert(a, d)?, convert(b, d)?);
    let at = a.span.union(b.span);
    Ok(Expr::call(name, vec![a, b]).with_span(at))
}

/// `x [NOT] BETWEEN [SYMMETRIC] low AND high`. The symmetric form is PostgreSQL's
/// `(x BETWEEN low AND high) OR (x BETWEEN high AND low)`, so a NULL bound gives NULL
/// (not what `least`/`greatest`, which skip NULLs, would give).
fn between(
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

fn in_list(
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

#[allow(clippy::too_many_arguments)]
fn like(
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

fn cast(
    e: &ast::Expr,
    kind: &CastKind,
    x: &ast::Expr,
    data_type: &ast::DataType,
    has_format: bool,
    d: Cx,
) -> Result<Expr, ParseError> {
    if *kind == CastKind::SafeCast {
        return Err(error(
            "SAFE_CAST is not supported (TRY_CAST is)",
            shallow_span(e, d),
        ));
    }
    if has_format {
        return Err(unsupported(e, d));
    }
    let x = convert(x, d)?;
    let at = node_span(e, d, &[&x]);
    let to = from_sql_type(data_type).map_err(|m| error(m, at))?;
    Ok(match kind {
        CastKind::TryCast => x.try_cast(to),
        _ => x.cast(to),
    }
    .with_span(at))
}

/// The fields `EXTRACT` knows, as `date_part` spells them.
const EXTRACT_FIELDS: &[&str] = &[
    "year",
    "quarter",
    "month",
    "week",
    "day",
    "dow",
    "isodow",
    "doy",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "epoch",
    "isoyear",
    "decade",
    "century",
    "millennium",
];

/// The `date_part` name of an `EXTRACT` field written as `word` (any case), with
/// PostgreSQL's and DuckDB's synonyms (`years`, `dayofweek`, `msec`, …).
fn extract_field(word: &str) -> Option<&'static str> {
    Some(match word.to_ascii_lowercase().as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => "year",
        "quarter" | "quarters" => "quarter",
        "month" | "months" | "mon" | "mons" => "month",
        "week" | "weeks" | "w" => "week",
        "day" | "days" | "d" | "dayofmonth" => "day",
        "dow" | "dayofweek" | "weekday" => "dow",
        "isodow" => "isodow",
        "doy" | "dayofyear" => "doy",
        "hour" | "hours" | "h" | "hr" | "hrs" => "hour",
        "minute" | "minutes" | "m" | "min" | "mins" => "minute",
        "second" | "seconds" | "s" | "sec" | "secs" => "second",
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => "millisecond",
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => "microsecond",
        "epoch" => "epoch",
        "isoyear" => "isoyear",
        "decade" | "decades" => "decade",
        "century" | "centuries" => "century",
        "millennium" | "millennia" | "millenniums" => "millennium",
        _ => return None,
    })
}

/// `EXTRACT(field FROM x)`: `date_part('field', x)` with the field normalized.
fn extract(e: &ast::Expr, field: &DateTimeField, x: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    let (word, at) = match field {
        DateTimeField::Custom(ident) => (ident.value.clone(), span(ident.span)),
        other => (other.to_string(), Span::NONE),
    };
    let Some(name) = extract_field(&word) else {
        let at = if at.is_known() {
            at
        } else {
            shallow_span(e, d)
        };
        return Err(error(
            format!(
                "unknown EXTRACT field {word}; expected one of {}",
                EXTRACT_FIELDS.join(", ")
            ),
            at,
        ));
    };
    let x = convert(x, d)?;
    let at = node_span(e, d, &[&x]);
    Ok(Expr::call("date_part", vec![expr::lit(name), x]).with_span(at))
}

/// The unit of a bare number in an interval with a leading field (`INTERVAL '3' DAY`).
fn interval_unit(
    field: &DateTimeField,
) -> Option<arrow::compute::kernels::cast_utils::IntervalUnit> {
    use arrow::compute::kernels::cast_utils::IntervalUnit as U;
    Some(match field {
        DateTimeField::Year | DateTimeField::Years => U::Year,
        DateTimeField::Month | DateTimeField::Months => U::Month,
        DateTimeField::Week(None) | DateTimeField::Weeks => U::Week,
        DateTimeField::Day | DateTimeField::Days => U::Day,
        DateTimeField::Hour | DateTimeField::Hours => U::Hour,
        DateTimeField::Minute | DateTimeField::Minutes => U::Minute,
        DateTimeField::Second | DateTimeField::Seconds => U::Second,
        DateTimeField::Millisecond | DateTimeField::Milliseconds => U::Millisecond,
        DateTimeField::Microsecond | DateTimeField::Microseconds => U::Microsecond,
        DateTimeField::Nanosecond | DateTimeField::Nanoseconds => U::Nanosecond,
        DateTimeField::Decade => U::Decade,
        DateTimeField::Century => U::Century,
        _ => return None,
    })
}

/// `INTERVAL 'text' [unit]` or `INTERVAL n unit`: a `MonthDayNano` interval literal,
/// read by arrow's interval parser (PostgreSQL's unit names and abbreviations).
fn interval(e: &ast::Expr, iv: &ast::Interval, d: Cx) -> Result<Expr, ParseError> {
    use arrow::compute::kernels::cast_utils::IntervalUnit;
    let at = shallow_span(e, d);
    if iv.last_field.is_some()
        || iv.leading_precision.is_some()
        || iv.fractional_seconds_precision.is_some()
    {
        return Err(error(
            "INTERVAL … TO … and interval precisions are not supported; write INTERVAL '1 year 2 months'",
            at,
        ));
    }
    let (text, text_at) = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::Number(s, false) => (s.as_str(), span(v.span)),
            _ => return Err(error("an INTERVAL needs a quoted string or a number", at)),
        },
        _ => return Err(error("an INTERVAL needs a quoted string or a number", at)),
    };
    let unit = match &iv.leading_field {
        None => IntervalUnit::Second,
        Some(field) => interval_unit(field)
            .ok_or_else(|| error(format!("INTERVAL unit {field} is not supported"), at))?,
    };
    let value = crate::scalar::parse_interval(text, unit)
        .map_err(|_| error(format!("invalid INTERVAL literal '{text}'"), text_at))?;
    let at = if at.is_known() { at } else { text_at };
    Ok(Expr::new(ExprKind::Literal(ScalarValue::IntervalMonthDayNano(value))).with_span(at))
}

fn case_expr(
    e: &ast::Expr,
    operand: Option<&ast::Expr>,
    conditions: &[ast::CaseWhen],
    else_result: Option<&ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    let boxed = |x: &ast::Expr| convert(x, d).map(Box::new);
    let operand = operand.map(boxed).transpose()?;
    let branches = conditions
        .iter()
        .map(|w| Ok((convert(&w.condition, d)?, convert(&w.result, d)?)))
        .collect::<Result<Vec<_>, ParseError>>()?;
    let else_expr = else_result.map(boxed).transpose()?;
    let at = node_span(e, d, &[]);
    Ok(Expr::new(ExprKind::Case {
        operand,
        branches,
        else_expr,
    })
    .with_span(at))
}

/// The registry name of a binary operator other than `AND`/`OR`.
fn operator_name(op: &BinaryOperator) -> Option<&'static str> {
    Some(match op {
        BinaryOperator::Plus => "add",
        BinaryOperator::Minus => "subtract",
        BinaryOperator::Multiply => "multiply",
        BinaryOperator::Divide => "divide",
        BinaryOperator::Modulo => "modulo",
        BinaryOperator::Eq => "equal",
        BinaryOperator::NotEq => "not_equal",
        BinaryOperator::Lt => "less_than",
        BinaryOperator::LtEq => "less_than_or_equal_to",
        BinaryOperator::Gt => "greater_than",
        BinaryOperator::GtEq => "greater_than_or_equal_to",
        BinaryOperator::StringConcat => "concat_op",
        BinaryOperator::BitwiseAnd => "bitwise_and",
        BinaryOperator::BitwiseOr => "bitwise_or",
        // The generic dialect reads `^` as XOR; PostgreSQL and DuckDB agree it is
        // exponentiation (and PostgreSQL's XOR is `#`).
        BinaryOperator::BitwiseXor | BinaryOperator::PGExp => "power",
        BinaryOperator::Custom(op) if op == "#" => "bitwise_xor",
        BinaryOperator::PGBitwiseXor => "bitwise_xor",
        BinaryOperator::PGBitwiseShiftLeft => "shift_left",
        BinaryOperator::PGBitwiseShiftRight => "shift_right",
        _ => return None,
    })
}

fn binary(
    e: &ast::Expr,
    left: &ast::Expr,
    op: &BinaryOperator,
    right: &ast::Expr,
    cx: Cx,
) -> Result<Expr, ParseError> {
    let d = cx.deeper();
    match op {
        BinaryOperator::And | BinaryOperator::Or => {
            // Walk the left spine iteratively: long chains of AND/OR are common and
            // would otherwise nest as deep as they are long.
            let mut operands = vec![right];
            let mut rest = left;
            loop {
                match rest {
                    ast::Expr::BinaryOp {
                        left,
                        op: inner,
                        right,
                    } if inner == op => {
                        operands.push(right);
                        rest = left;
                    }
                    _ => break,
                }
            }
            operands.push(rest);
            operands.reverse();
            let children = operands
                .into_iter()
                .map(|x| convert(x, d))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if *op == BinaryOperator::And {
                expr::and(children)
            } else {
                expr::or(children)
            })
        }
        BinaryOperator::PGRegexMatch
        | BinaryOperator::PGRegexIMatch
        | BinaryOperator::PGRegexNotMatch
        | BinaryOperator::PGRegexNotIMatch => {
            let mut call = binary_call("regexp_like", left, right, d)?;
            let insensitive = matches!(
                op,
                BinaryOperator::PGRegexIMatch | BinaryOperator::PGRegexNotIMatch
            );
            if let (ExprKind::Call { args, .. }, true) = (&mut call.kind, insensitive) {
                args.push(expr::lit("i"));
            }
            let negated = matches!(
                op,
                BinaryOperator::PGRegexNotMatch | BinaryOperator::PGRegexNotIMatch
            );
            Ok(if negated { call.not() } else { call })
        }
        _ if pg_precedence(op).is_some() && needs_reassociation(e) => operator_chain(e, cx),
        _ => match operator_name(op) {
            Some(name) => binary_call(name, left, right, d),
            None => Err(unsupported(e, d)),
        },
    }
}

/// PostgreSQL's (and DuckDB's) precedence of the arithmetic, string and bitwise
/// operators, tightest highest: `^`, then `* / %`, then `+ -`, then the other
/// operators (`|| & | # << >>`), all left-associative. `None` for other operators.
fn pg_precedence(op: &BinaryOperator) -> Option<u8> {
    use BinaryOperator as B;
    Some(match op {
        B::BitwiseXor | B::PGExp => 4,
        B::Multiply | B::Divide | B::Modulo => 3,
        B::Plus | B::Minus => 2,
        B::StringConcat
        | B::BitwiseAnd
        | B::BitwiseOr
        | B::PGBitwiseXor
        | B::PGBitwiseShiftLeft
        | B::PGBitwiseShiftRight => 1,
        B::Custom(op) if op == "#" => 1,
        _ => return None,
    })
}

/// PostgreSQL's precedence of a prefix operator written in a chain: `-` and `+` bind
/// tightest (`-2 ^ 2` is 4), `~` as the other operators (`~a + b` is `~(a + b)`).
fn pg_prefix_precedence(op: &UnaryOperator) -> Option<u8> {
    match op {
        UnaryOperator::Minus | UnaryOperator::Plus => Some(5),
        UnaryOperator::BitwiseNot => Some(1),
        _ => None,
    }
}

/// A prefix operator of a chain, other than a minus sign folded into a number.
fn chain_prefix(e: &ast::Expr) -> Option<(&UnaryOperator, &ast::Expr)> {
    match e {
        ast::Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } if matches!(
            expr.as_ref(),
            ast::Expr::Value(ValueWithSpan {
                value: Value::Number(..),
                ..
            })
        ) =>
        {
            None
        }
        ast::Expr::UnaryOp { op, expr } if pg_prefix_precedence(op).is_some() => Some((op, expr)),
        _ => None,
    }
}

/// Whether the chain of operators (of [`pg_precedence`], with prefix `-`, `+`, `~`)
/// written without parentheses at `e` holds one that sqlparser ranks differently
/// from PostgreSQL: it reads `^` below `*` and `+`, `||` as tight as `*`, and `~`
/// as tight as a minus sign.
fn needs_reassociation(e: &ast::Expr) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let ast::Expr::BinaryOp { left, op, right } = x {
            match pg_precedence(op) {
                Some(2 | 3) => {}
                Some(_) => return true,
                None => continue,
            }
            stack.push(left);
            stack.push(right);
        } else if let Some((op, operand)) = chain_prefix(x) {
            if *op == UnaryOperator::BitwiseNot {
                return true;
            }
            stack.push(operand);
        }
    }
    false
}

/// One piece of an operator chain, in written order.
enum Piece<'a> {
    Operand(&'a ast::Expr),
    Infix(&'a BinaryOperator),
    Prefix(&'a UnaryOperator),
}

/// A chain of arithmetic, string and bitwise operators written without
/// parentheses, regrouped by PostgreSQL's precedences ([`pg_precedence`],
/// [`pg_prefix_precedence`]): `2 * 3 ^ 2` is `2 * (3 ^ 2)` and `'a' || 1 + 2` is
/// `'a' || (1 + 2)`.
///
/// sqlparser's tree keeps the pieces in their written order; they are read back in
/// that order (without recursion) and grouped again by precedence climbing, which
/// recurses only once per precedence level or prefix operator.
fn operator_chain(e: &ast::Expr, cx: Cx) -> Result<Expr, ParseError> {
    let mut pieces = Vec::new();
    let mut stack = vec![Piece::Operand(e)];
    while let Some(piece) = stack.pop() {
        match piece {
            Piece::Operand(ast::Expr::BinaryOp { left, op, right })
                if pg_precedence(op).is_some() =>
            {
                stack.push(Piece::Operand(right));
                stack.push(Piece::Infix(op));
                stack.push(Piece::Operand(left));
            }
            Piece::Operand(x) => match chain_prefix(x) {
                Some((op, operand)) => {
                    stack.push(Piece::Operand(operand));
                    stack.push(Piece::Prefix(op));
                }
                None => pieces.push(Piece::Operand(x)),
            },
            other => pieces.push(other),
        }
    }
    let mut chain = Chain {
        pieces: pieces.into_iter().peekable(),
        e,
        cx,
    };
    let (x, _) = chain.climb(0)?;
    match chain.pieces.next() {
        None => Ok(x),
        Some(_) => Err(chain.malformed()),
    }
}

/// Precedence climbing over the pieces of an operator chain.
struct Chain<'a, I: Iterator<Item = Piece<'a>>> {
    pieces: std::iter::Peekable<I>,
    e: &'a ast::Expr,
    cx: Cx,
}

impl<'a, I: Iterator<Item = Piece<'a>>> Chain<'a, I> {
    fn malformed(&self) -> ParseError {
        error("malformed operator chain", shallow_span(self.e, self.cx))
    }

    /// A node over `children` (with their heights), within the nesting limit.
    fn node(&self, name: &str, children: Vec<(Expr, usize)>) -> Result<(Expr, usize), ParseError> {
        let height = 1 + children.iter().map(|c| c.1).max().unwrap_or(0);
        let at = children.iter().fold(Span::NONE, |s, c| s.union(c.0.span));
        if self.cx.depth + height > MAX_DEPTH {
            let last = children.last().map_or(at, |c| c.0.span);
            return Err(error(
                format!("the expression is nested too deeply (more than {MAX_DEPTH} levels)"),
                last,
            ));
        }
        let args = children.into_iter().map(|c| c.0).collect();
        Ok((Expr::call(name, args).with_span(at), height))
    }

    /// The longest expression whose operators bind at least as tightly as `min`, and
    /// its height.
    #[recursive::recursive]
    fn climb(&mut self, min: u8) -> Result<(Expr, usize), ParseError> {
        let mut left = match self.pieces.next() {
            Some(Piece::Operand(x)) => {
                let x = convert(x, self.cx.deeper())?;
                let height = x.size().1;
                (x, height)
            }
            Some(Piece::Prefix(op)) => {
                let p = pg_prefix_precedence(op).ok_or_else(|| self.malformed())?;
                let operand = self.climb(p + 1)?;
                match op {
                    UnaryOperator::Plus => operand,
                    UnaryOperator::Minus => self.node("negate", vec![operand])?,
                    _ => self.node("bitwise_not", vec![operand])?,
                }
            }
            _ => return Err(self.malformed()),
        };
        while let Some(Piece::Infix(op)) = self.pieces.peek() {
            let op = *op;
            let p = pg_precedence(op).ok_or_else(|| self.malformed())?;
            if p < min {
                break;
            }
            self.pieces.next();
            let right = self.climb(p + 1)?;
            let name = operator_name(op).ok_or_else(|| unsupported(self.e, self.cx))?;
            left = self.node(name, vec![left, right])?;
        }
        Ok(left)
    }
}

/// A function call; `if(c, a, b)` is a `CASE`.
fn function(e: &ast::Expr, f: &ast::Function, d: Cx) -> Result<Expr, ParseError> {
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

/// A literal value; `negative` when a unary minus was applied to it directly.
fn value(v: &ValueWithSpan, negative: bool) -> Result<ScalarValue, ParseError> {
    let at = span(v.span);
    Ok(match &v.value {
        Value::Number(text, false) => number(text, negative, at)?,
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::UnicodeStringLiteral(s)
        | Value::NationalStringLiteral(s)
        | Value::TripleSingleQuotedString(s)
        | Value::TripleDoubleQuotedString(s) => ScalarValue::Utf8(s.clone()),
        Value::DollarQuotedString(s) => ScalarValue::Utf8(s.value.clone()),
        Value::Boolean(b) => ScalarValue::Boolean(*b),
        Value::Null => ScalarValue::Null(DataType::Null),
        Value::HexStringLiteral(digits) => ScalarValue::Binary(hex_literal(digits, at)?),
        other => {
            return Err(error(
                format!("unsupported SQL construct: {}", describe(other)),
                at,
            ))
        }
    })
}

/// The bytes of `X'4142'` from its digits: an even number of hexadecimal digits.
fn hex_literal(digits: &str, at: Span) -> Result<Vec<u8>, ParseError> {
    if let Some(bad) = digits.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(error(
            format!("a BLOB literal X'…' holds hexadecimal digits, not '{bad}'"),
            at,
        ));
    }
    if digits.len() % 2 == 1 {
        return Err(error(
            "a BLOB literal X'…' needs an even number of hexadecimal digits",
            at,
        ));
    }
    Ok((0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap_or(0))
        .collect())
}

/// A numeric literal, typed as DuckDB types it: `BIGINT`, else `UBIGINT`, else
/// `DECIMAL(digits, 0)`; with a point `DECIMAL(digits, fraction digits)` (`1.25` is
/// `DECIMAL(3,2)`); `DOUBLE` with an exponent or beyond 38 digits.
fn number(text: &str, negative: bool, at: Span) -> Result<ScalarValue, ParseError> {
    let signed = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let as_double = || -> Result<ScalarValue, ParseError> {
        let v: f64 = signed
            .parse()
            .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
        if v.is_infinite() {
            return Err(error(format!("numeric literal {signed} out of range"), at));
        }
        Ok(ScalarValue::Float64(v))
    };
    let max = crate::types::DECIMAL128_MAX_PRECISION as usize;
    if text.contains(['.', 'e', 'E']) {
        return match crate::decimal::literal_type(text) {
            Some((p, s)) if p <= max => {
                let (p, s) = (p.max(1) as u8, s as i8);
                let v = crate::decimal::parse::<i128>(&signed, p, s)
                    .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
                Ok(ScalarValue::Decimal128(v, p, s))
            }
            _ => as_double(),
        };
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error(format!("invalid numeric literal {signed}"), at));
    }
    if let Ok(v) = signed.parse::<i64>() {
        Ok(ScalarValue::Int64(v))
    } else if let (false, Ok(v)) = (negative, text.parse::<u64>()) {
        Ok(ScalarValue::UInt64(v))
    } else if text.len() <= max {
        let p = text.len() as u8;
        let v = crate::decimal::parse::<i128>(&signed, p, 0)
            .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
        Ok(ScalarValue::Decimal128(v, p, 0))
    } else {
        as_double()
    }
}

/// `TYPE 'text'`: a literal of the type, parsed from the text.
fn typed_string(
    data_type: &ast::DataType,
    v: &ValueWithSpan,
    at: Span,
) -> Result<ScalarValue, ParseError> {
    let to = from_sql_type(data_type).map_err(|m| error(m, at))?;
    let type_name = sql_type_name(&to);
    let text = match &v.value {
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::UnicodeStringLiteral(s)
        | Value::NationalStringLiteral(s) => s.as_str(),
        Value::DollarQuotedString(s) => s.value.as_str(),
        _ => {
            return Err(error(
                format!("a {type_name} literal must be a quoted string"),
                at,
            ));
        }
    };
    ScalarValue::parse(text, &to).map_err(|e| error(e.message(text, &to), at))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, TimeUnit};

    use super::*;
    use crate::expr::{and, call, case, col, lit, null, or};
    use crate::types::SQL_TIME_ZONE;

    fn p(text: &str) -> Expr {
        match parse_expr(text) {
            Ok(e) => e,
            Err(e) => panic!("{text:?} did not parse: {e}"),
        }
    }

    /// The message and the (column, end column) of the error `text` gives.
    fn err(text: &str) -> (String, (u32, u32)) {
        match parse_expr(text) {
            Ok(e) => panic!("{text:?} parsed as {e:?}"),
            Err(e) => (e.message, (e.span.column, e.span.end_column)),
        }
    }

    fn message(text: &str) -> String {
        err(text).0
    }

    fn scalar(text: &str) -> ScalarValue {
        match p(text).kind {
            ExprKind::Literal(v) => v,
            other => panic!("{text:?} is not a literal: {other:?}"),
        }
    }

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

    #[test]
    fn integer_literals_are_bigint_then_ubigint() {
        assert_eq!(scalar("0"), ScalarValue::Int64(0));
        assert_eq!(scalar("9223372036854775807"), ScalarValue::Int64(i64::MAX));
        assert_eq!(scalar("9223372036854775808"), ScalarValue::UInt64(1 << 63));
        assert_eq!(
            scalar("18446744073709551615"),
            ScalarValue::UInt64(u64::MAX)
        );
        // Beyond UBIGINT: DECIMAL(digits, 0) up to 38 digits (DuckDB: HUGEINT), then
        // DOUBLE.
        assert_eq!(
            scalar("18446744073709551616"),
            ScalarValue::Decimal128(18446744073709551616, 20, 0)
        );
        assert_eq!(
            scalar("12345678901234567890123"),
            ScalarValue::Decimal128(12345678901234567890123, 23, 0)
        );
        assert_eq!(scalar(&"9".repeat(39)), ScalarValue::Float64(1e39));
    }

    #[test]
    fn unary_minus_folds_into_number_literals_only() {
        assert_eq!(scalar("-9223372036854775808"), ScalarValue::Int64(i64::MIN));
        assert_eq!(scalar("-5"), ScalarValue::Int64(-5));
        assert_eq!(scalar("- 5"), ScalarValue::Int64(-5));
        assert_eq!(scalar("-1.5"), ScalarValue::Decimal128(-15, 2, 1));
        assert_eq!(scalar("-0.0"), ScalarValue::Decimal128(0, 2, 1));
        assert_eq!(scalar("-0.0e0"), ScalarValue::Float64(-0.0));
        assert_ne!(scalar("-0.0e0"), ScalarValue::Float64(0.0));
        assert_eq!(scalar("(-5)"), ScalarValue::Int64(-5));
        assert_eq!(p("-(5)"), lit(5i64).neg());
        assert_eq!(p("-(-5)"), lit(-5i64).neg());
        assert_eq!(p("- -5"), lit(-5i64).neg());
        assert_eq!(p("-x"), col("x").neg());
        assert_eq!(p("-(x + 1)"), col("x").add(lit(1i64)).neg());
        assert_eq!(
            scalar("-9223372036854775809"),
            ScalarValue::Decimal128(-9223372036854775809, 19, 0)
        );
        assert_eq!(
            scalar("-18446744073709551615"),
            ScalarValue::Decimal128(-18446744073709551615, 20, 0)
        );
    }

    #[test]
    fn unary_plus_is_dropped() {
        assert_eq!(p("+5"), lit(5i64));
        assert_eq!(p("+x"), col("x"));
        assert_eq!(p("+(-x)"), col("x").neg());
    }

    /// As DuckDB: a point makes a DECIMAL of the digits written, an exponent a DOUBLE.
    #[test]
    fn point_literals_are_decimal_and_exponents_double() {
        assert_eq!(scalar("1.5"), ScalarValue::Decimal128(15, 2, 1));
        assert_eq!(scalar("1e3"), ScalarValue::Float64(1000.0));
        assert_eq!(scalar("2E-2"), ScalarValue::Float64(0.02));
        assert_eq!(scalar("1.0"), ScalarValue::Decimal128(10, 2, 1));
        assert_eq!(scalar(".5"), ScalarValue::Decimal128(5, 1, 1));
        assert_eq!(scalar("0.05"), ScalarValue::Decimal128(5, 3, 2));
        assert_eq!(
            p("x > 2.0"),
            col("x").gt(lit(ScalarValue::Decimal128(20, 2, 1)))
        );
        assert_eq!(
            scalar("1.23456789012345678901234567890123456789"),
            ScalarValue::Float64(1.234_567_890_123_456_8)
        );
        assert_eq!(
            err("1e400"),
            ("numeric literal 1e400 out of range".into(), (1, 6))
        );
        assert_eq!(message("-1e400"), "numeric literal -1e400 out of range");
    }

    #[test]
    fn strings_booleans_and_null() {
        assert_eq!(p("'AIR'"), lit("AIR"));
        assert_eq!(p("'it''s'"), lit("it's"));
        assert_eq!(p("'back\\slash'"), lit("back\\slash"));
        assert_eq!(p("''"), lit(""));
        assert_eq!(p("TRUE"), lit(true));
        assert_eq!(p("false"), lit(false));
        assert_eq!(p("NULL"), null());
        assert_eq!(scalar("null"), ScalarValue::Null(DataType::Null));
    }

    #[test]
    fn typed_date_literals() {
        assert_eq!(scalar("DATE '1970-01-01'"), ScalarValue::Date32(0));
        assert_eq!(scalar("DATE '1994-01-01'"), ScalarValue::Date32(8766));
        assert_eq!(scalar("DATE '1969-12-31'"), ScalarValue::Date32(-1));
        assert_eq!(
            err("DATE '1994-13-45'"),
            ("invalid DATE literal '1994-13-45'".into(), (6, 18))
        );
        assert_eq!(err("x < DATE 'soon'").1, (10, 16));
        assert_eq!(message("DATE 5"), "a DATE literal must be a quoted string");
    }

    #[test]
    fn typed_timestamp_literals() {
        let us = |v| ScalarValue::Timestamp(v, TimeUnit::Microsecond, None);
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:00:01'"), us(1_000_000));
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:00:01.5'"), us(1_500_000));
        assert_eq!(
            scalar("TIMESTAMP '1970-01-01T00:00:01.000002'"),
            us(1_000_002)
        );
        assert_eq!(scalar("TIMESTAMP '1970-01-02'"), us(86_400_000_000));
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:02'"), us(120_000_000));
        assert_eq!(scalar("TIMESTAMP '1969-12-31 23:59:59.999999'"), us(-1));
        assert_eq!(
            scalar("TIMESTAMP(0) '1970-01-01 00:01:00'"),
            ScalarValue::Timestamp(60, TimeUnit::Second, None)
        );
        assert_eq!(
            scalar("TIMESTAMP(3) '1970-01-01 00:00:00.250'"),
            ScalarValue::Timestamp(250, TimeUnit::Millisecond, None)
        );
        assert_eq!(
            scalar("TIMESTAMP(9) WITH TIME ZONE '1970-01-01 00:00:00.000000001'"),
            ScalarValue::Timestamp(1, TimeUnit::Nanosecond, Some(Arc::from(SQL_TIME_ZONE)))
        );
        assert_eq!(
            scalar("TIMESTAMP WITH TIME ZONE '2000-01-01'"),
            ScalarValue::Timestamp(
                946_684_800_000_000,
                TimeUnit::Microsecond,
                Some(Arc::from(SQL_TIME_ZONE))
            )
        );
        assert_eq!(
            message("TIMESTAMP(0) '1970-01-01 00:00:00.5'"),
            "TIMESTAMP(0) literal '1970-01-01 00:00:00.5' is more precise than the type"
        );
        assert_eq!(
            message("TIMESTAMP(9) '3000-01-01'"),
            "TIMESTAMP(9) literal '3000-01-01' out of range"
        );
        assert_eq!(
            message("TIMESTAMP '1970-01-01 25:00:00'"),
            "invalid TIMESTAMP literal '1970-01-01 25:00:00'"
        );
        assert_eq!(
            message("TIMESTAMP(4) '1970-01-01'"),
            "TIMESTAMP(4) is not supported; use a precision of 0, 3, 6 or 9"
        );
    }

    #[test]
    fn typed_numeric_and_other_literals() {
        assert_eq!(scalar("TINYINT '-128'"), ScalarValue::Int8(-128));
        assert_eq!(scalar("SMALLINT '300'"), ScalarValue::Int16(300));
        assert_eq!(scalar("INTEGER '5'"), ScalarValue::Int32(5));
        assert_eq!(scalar("INT ' 5 '"), ScalarValue::Int32(5));
        assert_eq!(
            scalar("BIGINT '-9223372036854775808'"),
            ScalarValue::Int64(i64::MIN)
        );
        assert_eq!(scalar("UTINYINT '255'"), ScalarValue::UInt8(255));
        assert_eq!(scalar("USMALLINT '65535'"), ScalarValue::UInt16(65535));
        assert_eq!(scalar("UINT32 '4294967295'"), ScalarValue::UInt32(u32::MAX));
        assert_eq!(
            scalar("UBIGINT '18446744073709551615'"),
            ScalarValue::UInt64(u64::MAX)
        );
        assert_eq!(
            err("TINYINT '300'"),
            ("TINYINT literal '300' out of range".into(), (9, 14))
        );
        assert_eq!(message("UTINYINT '-1'"), "invalid UTINYINT literal '-1'");
        assert_eq!(message("INTEGER 'five'"), "invalid INTEGER literal 'five'");
        assert_eq!(scalar("REAL '2.5'"), ScalarValue::Float32(2.5));
        assert_eq!(scalar("DOUBLE '2.5'"), ScalarValue::Float64(2.5));
        assert!(matches!(scalar("DOUBLE 'NaN'"), ScalarValue::Float64(v) if v.is_nan()));
        assert!(matches!(scalar("REAL 'nan'"), ScalarValue::Float32(v) if v.is_nan()));
        assert_eq!(
            scalar("DOUBLE 'Infinity'"),
            ScalarValue::Float64(f64::INFINITY)
        );
        assert_eq!(
            scalar("DOUBLE '-Infinity'"),
            ScalarValue::Float64(f64::NEG_INFINITY)
        );
        assert_eq!(scalar("REAL 'inf'"), ScalarValue::Float32(f32::INFINITY));
        assert_eq!(
            scalar("REAL '-INF'"),
            ScalarValue::Float32(f32::NEG_INFINITY)
        );
        assert_eq!(message("REAL '1e39'"), "REAL literal '1e39' out of range");
        assert_eq!(message("DOUBLE 'x'"), "invalid DOUBLE literal 'x'");
        assert_eq!(scalar("BOOLEAN 'true'"), ScalarValue::Boolean(true));
        assert_eq!(scalar("BOOLEAN 'FALSE'"), ScalarValue::Boolean(false));
        assert_eq!(
            message("BOOLEAN 'maybe'"),
            "invalid BOOLEAN literal 'maybe'"
        );
        assert_eq!(scalar("VARCHAR 'x'"), ScalarValue::Utf8("x".into()));
        assert_eq!(
            scalar("TIME '12:00'"),
            ScalarValue::Time(43_200_000_000, TimeUnit::Microsecond)
        );
        assert_eq!(
            scalar("TIME(3) '00:00:01.5'"),
            ScalarValue::Time(1_500, TimeUnit::Millisecond)
        );
        assert_eq!(
            message("TIME(0) '12:00:00.5'"),
            "TIME(0) literal '12:00:00.5' is more precise than the type"
        );
        assert_eq!(message("TIME '24:00'"), "invalid TIME literal '24:00'");
    }

    #[test]
    fn casts() {
        assert_eq!(p("CAST(x AS INTEGER)"), col("x").cast(DataType::Int32));
        assert_eq!(p("x::INTEGER"), col("x").cast(DataType::Int32));
        assert_eq!(
            p("x::BIGINT + 1"),
            col("x").cast(DataType::Int64).add(lit(1i64))
        );
        assert_eq!(p("-5::INTEGER"), lit(5i64).cast(DataType::Int32).neg());
        assert_eq!(
            p("CAST(x AS TIMESTAMP(3) WITH TIME ZONE)"),
            col("x").cast(DataType::Timestamp(
                TimeUnit::Millisecond,
                Some(SQL_TIME_ZONE.into())
            ))
        );
        assert_eq!(
            p("CAST(NULL AS INTEGER)"),
            lit(ScalarValue::Null(DataType::Int32))
        );
        assert_eq!(p("NULL::DATE"), lit(ScalarValue::Null(DataType::Date32)));
        assert_eq!(
            p("CAST((NULL) AS DATE)"),
            lit(ScalarValue::Null(DataType::Date32))
        );
        let typed_null = lit(ScalarValue::Null(DataType::Int32));
        assert_eq!(
            p("CAST(CAST(NULL AS INTEGER) AS BIGINT)"),
            Expr::new(ExprKind::Cast {
                expr: Box::new(typed_null),
                to: DataType::Int64
            })
        );
        assert_eq!(
            err("CAST(x AS TIME WITH TIME ZONE)"),
            (
                "TIME WITH TIME ZONE is not supported (PostgreSQL advises against it); use TIME or TIMESTAMP WITH TIME ZONE".into(),
                (6, 7)
            )
        );
    }

    #[test]
    fn binary_operators_are_gandiva_calls() {
        let (a, b) = (col("a"), col("b"));
        assert_eq!(p("a + b"), a.clone().add(b.clone()));
        assert_eq!(p("a - b"), a.clone().sub(b.clone()));
        assert_eq!(p("a * b"), a.clone().mul(b.clone()));
        assert_eq!(p("a / b"), a.clone().div(b.clone()));
        assert_eq!(p("a % b"), a.clone().rem(b.clone()));
        assert_eq!(p("a = b"), a.clone().eq(b.clone()));
        assert_eq!(p("a <> b"), a.clone().not_eq(b.clone()));
        assert_eq!(p("a != b"), a.clone().not_eq(b.clone()));
        assert_eq!(p("a < b"), a.clone().lt(b.clone()));
        assert_eq!(p("a <= b"), a.clone().lt_eq(b.clone()));
        assert_eq!(p("a > b"), a.clone().gt(b.clone()));
        assert_eq!(p("a >= b"), a.clone().gt_eq(b.clone()));
        assert_eq!(p("a + b * 2"), a.clone().add(b.clone().mul(lit(2i64))));
        assert_eq!(p("(a + b) * 2"), a.add(b).mul(lit(2i64)));
    }

    #[test]
    fn and_or_are_flattened() {
        let abc = and(vec![col("a"), col("b"), col("c")]);
        assert_eq!(p("a AND b AND c"), abc);
        assert_eq!(p("(a AND b) AND c"), abc);
        assert_eq!(p("a AND (b AND c)"), abc);
        assert!(matches!(&abc.kind, ExprKind::And(children) if children.len() == 3));
        assert_eq!(
            p("a OR (b OR c) OR d"),
            or(vec![col("a"), col("b"), col("c"), col("d")])
        );
        assert_eq!(p("a OR b AND c"), col("a").or(col("b").and(col("c"))));
        assert_eq!(p("(a OR b) AND c"), col("a").or(col("b")).and(col("c")));
    }

    #[test]
    fn long_and_chains_do_not_nest() {
        let text = vec!["x > 1"; 5000].join(" AND ");
        match p(&text).kind {
            ExprKind::And(children) => assert_eq!(children.len(), 5000),
            other => panic!("{other:?}"),
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
    fn huge_inputs_do_not_overflow_the_stack() {
        let chain = |n: usize, op: &str| vec!["x"; n].join(op);
        for n in [900, 5_000, 60_000] {
            let concat = chain(n, " -> ");
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
        assert_eq!(
            message(&chain(5_000, " -> ")),
            "unsupported SQL construct: the -> operator"
        );
    }

    #[test]
    fn not_and_nested_parentheses() {
        assert_eq!(p("NOT x"), col("x").not());
        assert_eq!(p("NOT NOT x"), col("x").not().not());
        assert_eq!(p("NOT (NOT x)"), col("x").not().not());
        assert_eq!(p("((((x))))"), col("x"));
        assert_eq!(p("(((1 + (2))))"), lit(1i64).add(lit(2i64)));
        assert_eq!(p("NOT a = b"), col("a").eq(col("b")).not());
    }

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
    fn case_expressions() {
        assert_eq!(
            p("CASE WHEN x > 1 THEN 'a' WHEN x > 0 THEN 'b' ELSE 'c' END"),
            case(
                vec![
                    (col("x").gt(lit(1i64)), lit("a")),
                    (col("x").gt(lit(0i64)), lit("b"))
                ],
                Some(lit("c"))
            )
        );
        assert_eq!(
            p("CASE WHEN c THEN 1 END"),
            case(vec![(col("c"), lit(1i64))], None)
        );
        assert_eq!(
            p("CASE x WHEN 1 THEN 'one' END"),
            Expr::new(ExprKind::Case {
                operand: Some(Box::new(col("x"))),
                branches: vec![(lit(1i64), lit("one"))],
                else_expr: None,
            })
        );
    }

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
    fn substring_trim_position_and_ceil_are_plain_calls() {
        let s23 = call("substr", vec![col("s"), lit(2i64), lit(3i64)]);
        assert_eq!(p("SUBSTRING(s FROM 2 FOR 3)"), s23);
        assert_eq!(p("substring(s, 2, 3)"), s23);
        assert_eq!(p("substr(s, 2, 3)"), s23);
        assert_eq!(
            p("substring(s FROM 2)"),
            call("substr", vec![col("s"), lit(2i64)])
        );
        assert_eq!(
            p("substring(s, 2)"),
            call("substr", vec![col("s"), lit(2i64)])
        );
        assert_eq!(p("trim(s)"), call("btrim", vec![col("s")]));
        let x = lit("x");
        assert_eq!(p("trim(s, 'x')"), call("btrim", vec![col("s"), x.clone()]));
        assert_eq!(
            p("TRIM(BOTH 'x' FROM s)"),
            call("btrim", vec![col("s"), x.clone()])
        );
        assert_eq!(
            p("TRIM(LEADING 'x' FROM s)"),
            call("ltrim", vec![col("s"), x.clone()])
        );
        assert_eq!(
            p("trim(trailing 'x' from s)"),
            call("rtrim", vec![col("s"), x])
        );
        // sqlparser does not read `TRIM(BOTH FROM s)` (PostgreSQL does).
        assert!(message("TRIM(BOTH FROM s)").starts_with("Expected: ), found: s"));
        assert_eq!(
            p("POSITION('b' IN s)"),
            call("strpos", vec![col("s"), lit("b")])
        );
        assert_eq!(p("CEIL(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("CEILING(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("ceiling(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("FLOOR(x)"), call("floor", vec![col("x")]));
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
    fn concatenation_and_bitwise_operators() {
        let (a, b) = (col("a"), col("b"));
        let op = |name: &str| call(name, vec![col("a"), col("b")]);
        assert_eq!(p("a || b"), a.clone().concat(b.clone()));
        assert_eq!(p("a || b"), op("concat_op"));
        assert_eq!(p("a & b"), op("bitwise_and"));
        assert_eq!(p("a | b"), op("bitwise_or"));
        assert_eq!(p("a # b"), op("bitwise_xor"));
        assert_eq!(p("a << b"), op("shift_left"));
        assert_eq!(p("a >> b"), op("shift_right"));
        assert_eq!(p("a ^ b"), op("power"));
        assert_eq!(p("~a"), call("bitwise_not", vec![a.clone()]));
        assert_eq!(p("~ -a"), call("bitwise_not", vec![a.clone().neg()]));
        // `#` needs a space after it: `a#b` is one name in the generic dialect.
        assert_eq!(p("a#b"), col("a#b"));
        for (e, text) in [
            (op("concat_op"), "(a || b)"),
            (op("bitwise_and"), "(a & b)"),
            (op("bitwise_or"), "(a | b)"),
            (op("bitwise_xor"), "(a # b)"),
            (op("shift_left"), "(a << b)"),
            (op("shift_right"), "(a >> b)"),
            (op("power"), "power(a, b)"),
            (call("bitwise_not", vec![b]), "(~(b))"),
        ] {
            assert_eq!(e.to_string(), text);
            assert_eq!(p(text), e, "{text}");
        }
    }

    /// PostgreSQL and DuckDB: `^` binds tighter than `*`, and `||`, `&`, `|`, `#`,
    /// `<<`, `>>` looser than `+` (sqlparser ranks them otherwise).
    #[test]
    fn operators_group_as_in_postgresql() {
        let (a, b, c) = (col("a"), col("b"), col("c"));
        let pow = |x: Expr, y: Expr| call("power", vec![x, y]);
        assert_eq!(p("a * b ^ c"), a.clone().mul(pow(b.clone(), c.clone())));
        assert_eq!(p("a ^ b * c"), pow(a.clone(), b.clone()).mul(c.clone()));
        assert_eq!(p("a + b ^ c"), a.clone().add(pow(b.clone(), c.clone())));
        assert_eq!(p("a ^ b ^ c"), pow(pow(a.clone(), b.clone()), c.clone()));
        assert_eq!(p("(a * b) ^ c"), pow(a.clone().mul(b.clone()), c.clone()));
        assert_eq!(p("-2 ^ 2"), pow(lit(-2i64), lit(2i64)));
        assert_eq!(p("a || b + c"), a.clone().concat(b.clone().add(c.clone())));
        assert_eq!(p("a + b || c"), a.clone().add(b.clone()).concat(c.clone()));
        assert_eq!(
            p("a & b ^ c"),
            call("bitwise_and", vec![a.clone(), pow(b.clone(), c.clone())])
        );
        assert_eq!(
            p("a # b | c"),
            call(
                "bitwise_or",
                vec![call("bitwise_xor", vec![a.clone(), b.clone()]), c.clone()]
            )
        );
        assert_eq!(
            p("a << 1 + b"),
            call("shift_left", vec![a.clone(), lit(1i64).add(b.clone())])
        );
        // Prefix operators: `-` binds tightest, `~` as the other operators.
        assert_eq!(
            p("-a * b ^ 2"),
            a.clone().neg().mul(pow(b.clone(), lit(2i64)))
        );
        assert_eq!(p("-a ^ 2"), pow(a.clone().neg(), lit(2i64)));
        assert_eq!(
            p("~a + b"),
            call("bitwise_not", vec![a.clone().add(b.clone())])
        );
        assert_eq!(
            p("~a || b"),
            call("bitwise_not", vec![a.clone()]).concat(b.clone())
        );
        assert_eq!(
            p("a & ~b * 2"),
            call(
                "bitwise_and",
                vec![
                    a.clone(),
                    call("bitwise_not", vec![b.clone().mul(lit(2i64))])
                ]
            )
        );
        assert_eq!(p("- -a || b"), a.clone().neg().neg().concat(b.clone()));
        assert_eq!(p("-a * b"), a.clone().neg().mul(b.clone()));
        assert_eq!(p("a = b ^ 2 AND c"), a.eq(pow(b, lit(2i64))).and(c));
        // A long chain is regrouped without recursion and within the nesting limit.
        let long = vec!["a"; 300].join(" || ");
        assert!(message(&long).starts_with("the expression is nested too deeply"));
        let ok = vec!["a"; 200].join(" ^ ");
        assert_eq!(p(&ok).size().1, 200);
    }

    #[test]
    fn regular_expression_operators() {
        let s = col("s");
        let like = |flags: bool| {
            let mut args = vec![col("s"), lit("a.*")];
            if flags {
                args.push(lit("i"));
            }
            call("regexp_like", args)
        };
        assert_eq!(p("s ~ 'a.*'"), like(false));
        assert_eq!(p("s ~* 'a.*'"), like(true));
        assert_eq!(p("s !~ 'a.*'"), like(false).not());
        assert_eq!(p("s !~* 'a.*'"), like(true).not());
        assert_eq!(
            p("s ~ 'a' AND s !~ 'b'"),
            call("regexp_like", vec![s.clone(), lit("a")])
                .and(call("regexp_like", vec![s, lit("b")]).not())
        );
        for e in [like(false), like(true).not()] {
            assert_eq!(p(&e.to_string()), e);
        }
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

    #[test]
    fn extract_is_date_part_with_a_normalized_field() {
        let part = |f: &str| call("date_part", vec![lit(f), col("d")]);
        for (field, name) in [
            ("YEAR", "year"),
            ("years", "year"),
            ("Quarter", "quarter"),
            ("MONTH", "month"),
            ("mons", "month"),
            ("week", "week"),
            ("DAY", "day"),
            ("DOW", "dow"),
            ("dayofweek", "dow"),
            ("isodow", "isodow"),
            ("DOY", "doy"),
            ("DAYOFYEAR", "doy"),
            ("hour", "hour"),
            ("minutes", "minute"),
            ("SECOND", "second"),
            ("milliseconds", "millisecond"),
            ("MICROSECONDS", "microsecond"),
            ("epoch", "epoch"),
            ("'year'", "year"),
        ] {
            let text = format!("EXTRACT({field} FROM d)");
            assert_eq!(p(&text), part(name), "{text}");
            assert_eq!(p(&part(name).to_string()), part(name));
        }
        assert_eq!(
            err("EXTRACT(fortnight FROM d)"),
            (
                "unknown EXTRACT field fortnight; expected one of year, quarter, month, week, \
                 day, dow, isodow, doy, hour, minute, second, millisecond, microsecond, epoch, \
                 isoyear, decade, century, millennium"
                    .into(),
                (9, 18)
            )
        );
        // A field sqlparser knows but Broadhead does not is pointed at too.
        assert_eq!(err("1 + EXTRACT(JULIAN FROM d)").1, (13, 19));
        assert!(message("EXTRACT(JULIAN FROM d)").starts_with("unknown EXTRACT field JULIAN;"));
        assert_eq!(p("EXTRACT(CENTURY FROM d)"), part("century"));
    }

    #[test]
    fn text_casts_and_try_cast() {
        for t in [
            "VARCHAR",
            "VARCHAR(3)",
            "TEXT",
            "STRING",
            "CHAR(3)",
            "CHARACTER(2)",
        ] {
            let text = format!("CAST(x AS {t})");
            assert_eq!(p(&text), col("x").cast(DataType::Utf8), "{text}");
        }
        assert_eq!(p("x::text"), col("x").cast(DataType::Utf8));
        let tried = col("x").try_cast(DataType::Int32);
        assert_eq!(p("TRY_CAST(x AS INTEGER)"), tried);
        assert_eq!(tried.to_string(), "TRY_CAST(x AS INTEGER)");
        assert_eq!(p(&tried.to_string()), tried);
        assert_eq!(
            p("TRY_CAST(NULL AS DATE)"),
            lit(ScalarValue::Null(DataType::Date32))
        );
        assert_eq!(
            message("SAFE_CAST(x AS INTEGER)"),
            "SAFE_CAST is not supported (TRY_CAST is)"
        );
    }

    #[test]
    fn interval_literals() {
        use arrow::datatypes::IntervalMonthDayNano as I;
        const HOUR: i64 = 3_600_000_000_000;
        let iv = |m, d, n| ScalarValue::IntervalMonthDayNano(I::new(m, d, n));
        for (text, value, shown) in [
            ("INTERVAL '1 day'", iv(0, 1, 0), "INTERVAL '1 day'"),
            ("INTERVAL '1' DAY", iv(0, 1, 0), "INTERVAL '1 day'"),
            ("INTERVAL 3 MONTH", iv(3, 0, 0), "INTERVAL '3 months'"),
            (
                "interval '1 year 2 months'",
                iv(14, 0, 0),
                "INTERVAL '1 year 2 months'",
            ),
            (
                "INTERVAL '2 hours 30 minutes'",
                iv(0, 0, 5 * HOUR / 2),
                "INTERVAL '2 hours 30 minutes'",
            ),
            ("INTERVAL '-1 day'", iv(0, -1, 0), "INTERVAL '-1 days'"),
            (
                "INTERVAL '1.5 days'",
                iv(0, 1, HOUR * 12),
                "INTERVAL '1 day 12 hours'",
            ),
            (
                "INTERVAL '5'",
                iv(0, 0, 5_000_000_000),
                "INTERVAL '5 seconds'",
            ),
            ("INTERVAL '0 days'", iv(0, 0, 0), "INTERVAL '0 days'"),
            (
                "INTERVAL '2' HOUR",
                iv(0, 0, 2 * HOUR),
                "INTERVAL '2 hours'",
            ),
            (
                "INTERVAL '1 second 1 nanosecond'",
                iv(0, 0, 1_000_000_001),
                "INTERVAL '1 second 1 nanosecond'",
            ),
        ] {
            assert_eq!(scalar(text), value, "{text}");
            assert_eq!(value.to_string(), shown);
            assert_eq!(scalar(shown), value, "{shown}");
        }
        let interval = DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano);
        assert_eq!(
            p("CAST('1 day' AS INTERVAL)"),
            lit("1 day").cast(interval.clone())
        );
        assert_eq!(ScalarValue::parse(" 1 day ", &interval), Ok(iv(0, 1, 0)));
        assert_eq!(p("x::INTERVAL"), col("x").cast(interval.clone()));
        assert_eq!(
            p("CAST(NULL AS INTERVAL)"),
            lit(ScalarValue::Null(interval))
        );
        assert_eq!(
            err("x + INTERVAL '1 fortnight'"),
            ("invalid INTERVAL literal '1 fortnight'".into(), (14, 27))
        );
        assert_eq!(
            err("INTERVAL 'soon'"),
            ("invalid INTERVAL literal 'soon'".into(), (10, 16))
        );
        assert_eq!(
            message("INTERVAL '1' QUARTER"),
            "INTERVAL unit QUARTER is not supported"
        );
        assert!(message("INTERVAL '1-2' YEAR TO MONTH").starts_with("INTERVAL … TO …"));
        assert_eq!(
            message("INTERVAL x DAY"),
            "an INTERVAL needs a quoted string or a number"
        );
    }

    #[test]
    fn keyword_named_functions_print_bare_and_parse_back() {
        for name in crate::expr::KEYWORD_FUNCTIONS {
            let e = call(*name, vec![col("a"), col("b")]);
            assert_eq!(e.to_string(), format!("{name}(a, b)"));
            assert_eq!(p(&e.to_string()), e, "{name}");
        }
        for (e, text) in [
            (call("ceil", vec![col("x")]), "ceil(x)"),
            (call("ceil", vec![col("x"), col("y")]), "\"ceil\"(x, y)"),
            (call("substr", vec![col("x"), lit(1i64)]), "substr(x, 1)"),
            (
                call("substring", vec![col("x"), lit(1i64)]),
                "\"substring\"(x, 1)",
            ),
            (call("trim", vec![col("x")]), "\"trim\"(x)"),
            (call("trim", vec![]), "\"trim\"()"),
            (call("case", vec![col("x")]), "\"case\"(x)"),
            (call("if", vec![col("x")]), "\"if\"(x)"),
            (call("current_date", vec![]), "current_date()"),
            (call("current_date", vec![col("x")]), "\"current_date\"(x)"),
            (call("position", vec![col("x")]), "\"position\"(x)"),
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
        assert_eq!(message("a -> 'b'"), "unsupported SQL construct: a -> 'b'");
        assert_eq!(message("a[1]"), "unsupported SQL construct: a[1]");
        assert_eq!(message("(1, 2)"), "unsupported SQL construct: (1, 2)");
        assert_eq!(
            message("x AT TIME ZONE 'UTC'"),
            "unsupported SQL construct: x AT TIME ZONE 'UTC'"
        );
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
    fn empty_input() {
        assert_eq!(message(""), "empty expression");
        assert_eq!(message("  \n "), "empty expression");
        assert_eq!(message("-- just a comment"), "empty expression");
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
            parse_select_list("a, t.b").unwrap_err().message,
            "qualified column names are not supported"
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

    #[test]
    fn between_symmetric_and_asymmetric() {
        let (x, one, three) = (col("x"), lit(1i64), lit(3i64));
        let symmetric = x
            .clone()
            .between_symmetric(three.clone(), one.clone(), false);
        assert_eq!(p("x BETWEEN SYMMETRIC 3 AND 1"), symmetric);
        assert_eq!(p("x between symmetric 3 and 1"), symmetric);
        assert_eq!(
            p("x NOT BETWEEN SYMMETRIC 3 AND 1"),
            x.clone()
                .between_symmetric(three.clone(), one.clone(), true)
        );
        assert_eq!(
            p("x BETWEEN ASYMMETRIC 3 AND 1"),
            x.clone().between(three.clone(), one.clone())
        );
        // The lower bound ends at the AND outside parentheses and CASE.
        let abs = call("abs", vec![one.clone().add(lit(2i64))]);
        assert_eq!(
            p("x BETWEEN SYMMETRIC abs(1 + 2) AND 1 AND y"),
            and(vec![
                x.clone().between_symmetric(abs, one.clone(), false),
                col("y"),
            ])
        );
        let c = case(vec![(col("a").and(col("b")), one.clone())], None);
        assert_eq!(
            p("x BETWEEN SYMMETRIC CASE WHEN a AND b THEN 1 END AND 3"),
            x.clone().between_symmetric(c, three.clone(), false)
        );
        // Nested inside a bound.
        let inner = col("y").between_symmetric(three.clone(), one.clone(), false);
        assert_eq!(
            p("x BETWEEN SYMMETRIC (y BETWEEN SYMMETRIC 3 AND 1) AND z"),
            x.clone().between_symmetric(inner, col("z"), false)
        );
        // Display round-trips.
        for text in [
            "x BETWEEN SYMMETRIC 3 AND 1",
            "x NOT BETWEEN SYMMETRIC y + 1 AND 1",
        ] {
            let e = p(text);
            assert_eq!(p(&e.to_string()), e, "{text}");
        }
        // Both words are reserved in PostgreSQL; here they still name columns where
        // they cannot be the keyword.
        assert_eq!(
            p("x BETWEEN symmetric AND 3"),
            x.clone().between(col("symmetric"), three.clone())
        );
        assert_eq!(p("symmetric > 1"), col("symmetric").gt(one));
        // Malformed: sqlparser's own message, at the token.
        assert!(message("x BETWEEN SYMMETRIC 3 = 4 AND 1").starts_with("Expected: AND"));
        assert!(message("x BETWEEN SYMMETRIC 3").starts_with("Expected: AND"));
        // An error at the marker itself is a message, not a panic (fuzz case).
        assert!(!message("'' IS DISTINCT FROM BETWEEN SYMMETRIC - AND").is_empty());
        assert!(!message("x BETWEEN SYMMETRIC - AND").is_empty());
        // A quoted name is an ordinary function, not the marker.
        assert_eq!(
            p("\"symmetric\"(1) > 2"),
            call("symmetric", vec![lit(1i64)]).gt(lit(2i64))
        );
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
