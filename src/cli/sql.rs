//! `broadhead sql`: the filter job as one SQL statement.

use std::path::PathBuf;

use clap::Args;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::filter::{run_job, Count, Job};
use super::{CliResult, ExecArgs, Failure, OutputArgs};

/// Arguments of `broadhead sql`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// SELECT <list> FROM '<path>' [WHERE <expr>] [LIMIT n]; the list may be `*` or
    /// `count(*)`; the path may be a file, a directory or a glob
    query: String,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    exec: ExecArgs,
}

/// A statement taken apart.
#[derive(Debug, PartialEq)]
pub struct Statement {
    pub select: String,
    pub path: String,
    pub predicate: Option<String>,
    pub limit: Option<usize>,
}

pub fn run(a: SqlArgs) -> CliResult {
    let st = parse(&a.query)?;
    let count = count_star(&st.select);
    run_job(Job {
        paths: vec![PathBuf::from(&st.path)],
        predicate: st.predicate,
        select: if count.is_some() {
            None
        } else {
            Some(st.select)
        },
        limit: st.limit,
        count: count.map_or(Count::No, Count::Column),
        out: a.out,
        exec: a.exec,
    })
}

/// `count(*)` (with an optional alias): the name of the count column.
fn count_star(select: &str) -> Option<String> {
    let squeezed: String = select.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = squeezed.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("count(*)")
        .or_else(|| lower.strip_prefix("count( * )"))?
        .trim();
    if rest.is_empty() {
        return Some("count_star()".into());
    }
    let alias = rest.strip_prefix("as ").unwrap_or(rest).trim();
    let start = squeezed.len() - alias.len();
    let alias = squeezed[start..].trim_matches('"');
    (!alias.is_empty() && !alias.contains(' ')).then(|| alias.to_string())
}

/// Splits `SELECT … FROM '…' [WHERE …] [LIMIT n]` at its top-level keywords.
pub fn parse(sql: &str) -> CliResult<Statement> {
    let usage = |m: String| Failure::usage(format!("in the SQL statement: {m}"));
    let tokens: Vec<TokenWithSpan> = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| usage(e.to_string()))?
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let offset = |t: &TokenWithSpan| byte_offset(sql, t.span.start.line, t.span.start.column);
    let keyword = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
    // The next top-level token at or after `from` that is one of `keys`.
    let find = |from: usize, keys: &[Keyword]| {
        let mut depth = 0i32;
        for (i, t) in tokens.iter().enumerate().skip(from) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth == 0 && keys.iter().any(|&k| keyword(t, k)) => return Some(i),
                _ => {}
            }
        }
        None
    };
    if !tokens.first().is_some_and(|t| keyword(t, Keyword::SELECT)) {
        return Err(usage(
            "expected SELECT <list> FROM '<path>' [WHERE <expr>] [LIMIT n]".into(),
        ));
    }
    let from = find(1, &[Keyword::FROM])
        .ok_or_else(|| usage("expected FROM '<path>' after the select list".into()))?;
    let select = sql[offset(&tokens[0]) + "select".len()..offset(&tokens[from])]
        .trim()
        .to_string();
    if select.is_empty() {
        return Err(usage("the select list is empty".into()));
    }
    let path = match tokens.get(from + 1).map(|t| &t.token) {
        Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => s.clone(),
        _ => {
            return Err(usage(
                "expected a quoted path after FROM, e.g. FROM 'lineitem.parquet'".into(),
            ))
        }
    };
    let mut i = from + 2;
    let mut predicate = None;
    let mut limit = None;
    if tokens.get(i).is_some_and(|t| keyword(t, Keyword::WHERE)) {
        let end = find(i + 1, &[Keyword::LIMIT]).unwrap_or_else(|| {
            // Up to a trailing semicolon, if any.
            match tokens.last() {
                Some(t) if t.token == Token::SemiColon => tokens.len() - 1,
                _ => tokens.len(),
            }
        });
        let start = tokens
            .get(i + 1)
            .map(&offset)
            .ok_or_else(|| usage("expected an expression after WHERE".into()))?;
        let stop = tokens.get(end).map_or(sql.len(), &offset);
        let text = sql[start..stop].trim().to_string();
        if text.is_empty() {
            return Err(usage("expected an expression after WHERE".into()));
        }
        predicate = Some(text);
        i = end;
    }
    if tokens.get(i).is_some_and(|t| keyword(t, Keyword::LIMIT)) {
        match tokens.get(i + 1).map(|t| &t.token) {
            Some(Token::Number(n, _)) => {
                limit = Some(
                    n.parse()
                        .map_err(|_| usage(format!("LIMIT {n}: not a row count")))?,
                );
            }
            _ => return Err(usage("expected a number after LIMIT".into())),
        }
        i += 2;
    }
    if tokens.get(i).is_some_and(|t| t.token == Token::SemiColon) {
        i += 1;
    }
    if let Some(t) = tokens.get(i) {
        return Err(usage(format!(
            "unsupported: `{}` (only SELECT <list> FROM '<path>' [WHERE <expr>] [LIMIT n]; \
             no joins, GROUP BY, ORDER BY or aggregates but count(*))",
            t.token
        )));
    }
    Ok(Statement {
        select,
        path,
        predicate,
        limit,
    })
}

/// The byte offset of a 1-based (line, character column) position.
fn byte_offset(text: &str, line: u64, column: u64) -> usize {
    let mut offset = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n as u64 + 1 == line {
            return offset
                + l.char_indices()
                    .nth(column.saturating_sub(1) as usize)
                    .map_or(l.len(), |(i, _)| i);
        }
        offset += l.len();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements() {
        let st = parse(
            "SELECT a, f(b, c) AS x FROM 'd/*.parquet' WHERE a < 'limit' AND (b > 1) LIMIT 5;",
        )
        .unwrap();
        assert_eq!(
            st,
            Statement {
                select: "a, f(b, c) AS x".into(),
                path: "d/*.parquet".into(),
                predicate: Some("a < 'limit' AND (b > 1)".into()),
                limit: Some(5),
            }
        );
        let st = parse("select *\nfrom 'f.parquet'").unwrap();
        assert_eq!(
            (st.select.as_str(), st.predicate, st.limit),
            ("*", None, None)
        );
        assert!(parse("SELECT a FROM 'f' ORDER BY a").is_err());
        assert!(parse("SELECT a FROM f").is_err());
        assert!(parse("SELECT a FROM 'f', 'g'").is_err());
        assert!(parse("DELETE FROM 'f'").is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(count_star("count(*)"), Some("count_star()".into()));
        assert_eq!(count_star("COUNT( * ) AS n"), Some("n".into()));
        assert_eq!(count_star("count(*) n"), Some("n".into()));
        assert_eq!(count_star("a, count(*)"), None);
    }
}
