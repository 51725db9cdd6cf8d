//! Broadhead's rewrites of sqlparser's tokens before parsing: `#` as XOR, `EXTRACT`
//! fields kept as written, and `BETWEEN SYMMETRIC` (which sqlparser does not read).

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectNamePart};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{self, Token, TokenWithSpan};

/// Broadhead's rewrites of sqlparser's tokens, which
/// [`parse_expr`](super::parse_expr) applies before parsing: `#` as PostgreSQL's
/// XOR, `EXTRACT` fields checked with a caret, `BETWEEN SYMMETRIC`. A caller that
/// parses whole statements with sqlparser (the CLI's `broadhead sql`) applies them
/// too, so the expressions in a statement read as `parse_expr` reads them.
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
pub(super) const SYMMETRIC_MARK: char = '[';

fn is_word(t: &Token, keyword: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

/// sqlparser reads neither `BETWEEN SYMMETRIC` nor `BETWEEN ASYMMETRIC`. This drops
/// `ASYMMETRIC` (the default) and rewrites `BETWEEN SYMMETRIC low AND` to
/// `BETWEEN ␀(low) AND`, a [marker](SYMMETRIC_MARK) call that
/// [`convert`](super::convert) turns back into a symmetric BETWEEN.
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
pub(super) fn symmetric_low(low: &ast::Expr) -> Option<&ast::Expr> {
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

#[cfg(test)]
mod tests {
    use super::super::test_util::{message, p};
    use crate::expr::{and, call, case, col, lit};

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
}
