//! Operators: prefix and infix operators as calls, `AND`/`OR` flattened, and chains
//! of arithmetic, string and bitwise operators regrouped by PostgreSQL's precedences.

use sqlparser::ast::{self, BinaryOperator, UnaryOperator, Value, ValueWithSpan};

use super::errors::{error, shallow_span, unsupported};
use super::literals::literal;
use super::{binary_call, convert, Cx, MAX_DEPTH};
use crate::error::ParseError;
use crate::expr::{self, Expr, ExprKind, Span};

/// A prefix operator: `-` (folded into a number it applies to), `+`, `NOT`, `~`.
pub(super) fn unary(
    e: &ast::Expr,
    op: &UnaryOperator,
    x: &ast::Expr,
    cx: Cx,
) -> Result<Expr, ParseError> {
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
        // PostgreSQL's and DuckDB's JSON operators.
        BinaryOperator::Arrow => "json_extract",
        BinaryOperator::LongArrow => "json_extract_string",
        _ => return None,
    })
}

/// An infix operator; a chain of `AND`s or `OR`s becomes one node.
pub(super) fn binary(
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

#[cfg(test)]
mod tests {
    use super::super::test_util::{message, p};
    use crate::expr::{and, call, col, lit, or, Expr, ExprKind};

    #[test]
    fn unary_plus_is_dropped() {
        assert_eq!(p("+5"), lit(5i64));
        assert_eq!(p("+x"), col("x"));
        assert_eq!(p("+(-x)"), col("x").neg());
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
    fn not_and_nested_parentheses() {
        assert_eq!(p("NOT x"), col("x").not());
        assert_eq!(p("NOT NOT x"), col("x").not().not());
        assert_eq!(p("NOT (NOT x)"), col("x").not().not());
        assert_eq!(p("((((x))))"), col("x"));
        assert_eq!(p("(((1 + (2))))"), lit(1i64).add(lit(2i64)));
        assert_eq!(p("NOT a = b"), col("a").eq(col("b")).not());
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
}
