//! `broadhead sql`: the filter job as one SQL statement.
//!
//! The whole statement is parsed by sqlparser; the select list and the WHERE clause are
//! converted to [`Expr`]s by the library's converter ([`expr_from_ast`]), so every
//! error points into the statement. What a scan cannot do (DISTINCT, GROUP BY,
//! ORDER BY, joins, aggregates other than `count(*)`, `EXPLAIN`) runs through
//! DataFusion with the feature `datafusion` (`crate::full_sql`); without it, it is
//! an error naming the clause and the build that runs it.

use std::path::PathBuf;

use broadhead::sql::{expr_from_ast, parse_error_from, rewrite_tokens};
use broadhead::{Expr, ExprKind, ParseError, Span};
use sqlparser::ast::{
    self, Distinct, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, LimitClause,
    ObjectNamePart, SelectItem, SetExpr, Spanned, Statement, TableFactor, Value,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::args::SqlArgs;
use super::filter::{run_job, Count, Job, Predicate, Selected, Source};
use super::{CliResult, Failure};

/// What `broadhead sql` runs, for error messages.
const SUPPORTED: &str = "supported: SELECT <expressions, *, or count(*) alone> \
    FROM <file> [WHERE <predicate>] [LIMIT n] [OFFSET n]";

/// What a build without the feature `datafusion` says about a statement its scan
/// cannot run.
#[cfg(not(feature = "datafusion"))]
const FULL_SQL_HINT: &str = "GROUP BY, ORDER BY, joins, aggregates, DISTINCT, \
    subqueries and EXPLAIN run through DataFusion in a build with the `datafusion` \
    feature: cargo install --path cli --features datafusion (in a checkout of Broadhead)";

/// A statement as a job.
pub struct Plan {
    /// The file, directory or glob of the FROM clause.
    pub path: String,
    /// The WHERE clause.
    pub predicate: Option<Predicate>,
    /// `None`: every column.
    pub select: Option<(Vec<Selected>, Source)>,
    /// `count(*)` alone: the name of the count column.
    pub count: Option<String>,
    /// LIMIT.
    pub limit: Option<usize>,
    /// OFFSET (0 without one).
    pub offset: usize,
}

/// Runs `broadhead sql`: through the scan when it can, else (or with `--datafusion`)
/// through DataFusion in a build that has it.
pub fn run(a: SqlArgs) -> CliResult {
    if a.datafusion {
        return beyond_the_scan(a, None);
    }
    let plan = match plan(&a.query) {
        Ok(plan) => plan,
        Err(f) if f.beyond_scan => return beyond_the_scan(a, Some(f)),
        Err(f) => return Err(f),
    };
    run_job(Job {
        paths: vec![PathBuf::from(&plan.path)],
        predicate: plan.predicate,
        select: plan.select,
        limit: plan.limit,
        offset: plan.offset,
        count: plan.count.map_or(Count::No, Count::Column),
        out: a.out,
        exec: a.exec,
    })
}

/// A statement the scan does not run (`refused` says why; `None`: `--datafusion`).
#[cfg(feature = "datafusion")]
fn beyond_the_scan(a: SqlArgs, _refused: Option<Failure>) -> CliResult {
    crate::full_sql::run(&a)
}

/// A statement the scan does not run: the reason, and the build that runs it.
#[cfg(not(feature = "datafusion"))]
fn beyond_the_scan(_a: SqlArgs, refused: Option<Failure>) -> CliResult {
    Err(match refused {
        Some(f) => without_datafusion(f),
        None => Failure::usage(format!(
            "--datafusion: this build has no DataFusion. {FULL_SQL_HINT}"
        )),
    })
}

/// `refused`, with what enables the statement.
#[cfg(not(feature = "datafusion"))]
fn without_datafusion(refused: Failure) -> Failure {
    Failure::usage(format!("{}\n{FULL_SQL_HINT}", refused.message))
}

/// The statement's text and tokens, for error messages.
struct Stmt<'a> {
    sql: &'a str,
    tokens: Vec<TokenWithSpan>,
}

impl Stmt<'_> {
    fn source(&self) -> Source {
        Source {
            what: "the statement".into(),
            text: self.sql.to_string(),
        }
    }

    /// A usage error about the statement at `span`.
    fn error(&self, message: impl Into<String>, span: Span) -> Failure {
        self.source().failure(ParseError {
            message: message.into(),
            span,
        })
    }

    /// An unsupported clause, with the caret at `span`: beyond the scan.
    fn unsupported(&self, clause: &str, span: Span) -> Failure {
        self.beyond_scan(format!("{clause} is not supported ({SUPPORTED})"), span)
    }

    /// A statement the scan cannot run, as [`Stmt::error`]; DataFusion may run it.
    fn beyond_scan(&self, message: impl Into<String>, span: Span) -> Failure {
        Failure {
            beyond_scan: true,
            ..self.error(message, span)
        }
    }

    /// The span of a node, when computing it is safe (sqlparser's span computation
    /// recurses; very long statements get no caret).
    fn span_of(&self, node: &impl Spanned) -> Span {
        if self.tokens.len() > 1000 {
            return Span::NONE;
        }
        span(node.span())
    }

    /// The first unquoted keyword `k` outside parentheses.
    fn keyword(&self, k: Keyword) -> Span {
        let mut depth = 0i32;
        for t in &self.tokens {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::Word(w) if depth == 0 && w.keyword == k && w.quote_style.is_none() => {
                    return span(t.span)
                }
                _ => {}
            }
        }
        Span::NONE
    }

    /// The second `SELECT` (a subquery's) or the first `OVER` (a window function's),
    /// unquoted, anywhere.
    fn subquery_or_window(&self) -> Span {
        let mut selects = 0;
        for t in &self.tokens {
            if let Token::Word(w) = &t.token {
                if w.quote_style.is_none() {
                    selects += usize::from(w.keyword == Keyword::SELECT);
                    if selects == 2 || w.keyword == Keyword::OVER {
                        return span(t.span);
                    }
                }
            }
        }
        Span::NONE
    }

    /// The first token after the position `after`.
    fn token_after(&self, after: sqlparser::tokenizer::Span) -> Span {
        self.tokens
            .iter()
            .find(|t| t.span.start > after.start)
            .map_or(Span::NONE, |t| span(t.span))
    }
}

/// A sqlparser span as ours.
fn span(s: sqlparser::tokenizer::Span) -> Span {
    let (Ok(line), Ok(column), Ok(end)) = (
        u32::try_from(s.start.line),
        u32::try_from(s.start.column),
        u32::try_from(s.end.column),
    ) else {
        return Span::NONE;
    };
    if line == 0 || column == 0 {
        return Span::NONE;
    }
    let end_column = if s.end.line == s.start.line && end > column {
        end
    } else {
        column + 1
    };
    Span {
        line,
        column,
        end_column,
    }
}

/// Functions that aggregate rows, which a scan does not do.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "mean",
    "min",
    "max",
    "median",
    "mode",
    "product",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "string_agg",
    "array_agg",
    "list",
    "group_concat",
    "first",
    "last",
    "any_value",
    "arbitrary",
    "bool_and",
    "bool_or",
    "bit_and",
    "bit_or",
    "bit_xor",
    "every",
    "approx_count_distinct",
    "quantile",
    "percentile_cont",
    "percentile_disc",
    "corr",
    "covar_pop",
    "covar_samp",
    "arg_min",
    "arg_max",
    "min_by",
    "max_by",
];

/// The first aggregate call in `e`, if any.
fn find_aggregate(e: &Expr) -> Option<&Expr> {
    if let ExprKind::Call { name, .. } = &e.kind {
        if AGGREGATES.contains(&name.as_str()) {
            return Some(e);
        }
    }
    let mut found = None;
    e.for_each_child(|child| {
        if found.is_none() {
            found = find_aggregate(child);
        }
    });
    found
}

/// Whether a function call is `count(*)`.
fn is_count_star(e: &ast::Expr) -> bool {
    let ast::Expr::Function(f) = e else {
        return false;
    };
    let FunctionArguments::List(list) = &f.args else {
        return false;
    };
    f.name.0.len() == 1
        && f.name.to_string().eq_ignore_ascii_case("count")
        && f.over.is_none()
        && f.filter.is_none()
        && f.within_group.is_empty()
        && list.duplicate_treatment.is_none()
        && list.clauses.is_empty()
        && matches!(
            list.args.as_slice(),
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]
        )
}

/// The name of a top-level aggregate call, before conversion (which would reject
/// `count(DISTINCT x)` with a less helpful message).
fn top_aggregate(e: &ast::Expr) -> Option<String> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let name = f.name.to_string().to_ascii_lowercase();
    AGGREGATES.contains(&name.as_str()).then_some(name)
}

/// A row count in LIMIT or OFFSET.
fn row_count(st: &Stmt, e: &ast::Expr, clause: &str) -> CliResult<usize> {
    if let ast::Expr::Value(v) = e {
        if let Value::Number(n, _) = &v.value {
            if let Ok(n) = n.parse::<usize>() {
                return Ok(n);
            }
        }
    }
    Err(st.error(
        format!("{clause} takes a number of rows (a non-negative integer)"),
        st.span_of(e),
    ))
}

/// The file a FROM clause names.
fn table_path(st: &Stmt, from: &[ast::TableWithJoins]) -> CliResult<String> {
    let Some(first) = from.first() else {
        return Err(st.error(
            format!("a FROM clause naming a Parquet file is needed ({SUPPORTED})"),
            span(
                st.tokens
                    .last()
                    .map_or(sqlparser::tokenizer::Span::empty(), |t| t.span),
            ),
        ));
    };
    if let Some(second) = from.get(1) {
        return Err(st.unsupported(
            "reading more than one table (a join)",
            st.span_of(&second.relation),
        ));
    }
    if let Some(join) = first.joins.first() {
        let at = st.keyword(Keyword::JOIN);
        let at = if at.is_known() {
            at
        } else {
            st.span_of(&join.relation)
        };
        return Err(st.unsupported("JOIN", at));
    }
    let string_arg = |args: &[FunctionArg]| match args {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Value(v)))] => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    };
    match &first.relation {
        TableFactor::Table { name, args, .. } => match args {
            None => Ok(name
                .0
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(i) => i.value.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".")),
            Some(args) => {
                let function = name.to_string().to_ascii_lowercase();
                if function != "read_parquet" && function != "parquet_scan" {
                    return Err(st.error(
                        format!(
                            "unknown table function '{function}' (read_parquet('<path>') reads \
                             a Parquet file, a directory or a glob)"
                        ),
                        st.span_of(name),
                    ));
                }
                string_arg(&args.args).ok_or_else(|| {
                    st.error(
                        "read_parquet takes one quoted path: read_parquet('data/*.parquet')",
                        st.span_of(&first.relation),
                    )
                })
            }
        },
        TableFactor::Function { name, args, .. }
            if name.to_string().eq_ignore_ascii_case("read_parquet") =>
        {
            string_arg(args).ok_or_else(|| {
                st.error(
                    "read_parquet takes one quoted path: read_parquet('data/*.parquet')",
                    st.span_of(&first.relation),
                )
            })
        }
        other => Err(st.unsupported(
            "this kind of FROM item (a subquery or table expression)",
            st.span_of(other),
        )),
    }
}

/// Takes a statement apart into a job.
pub fn plan(sql: &str) -> CliResult<Plan> {
    let dialect = GenericDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| Failure::expr(parse_error_from(e.into(), sql), "the statement", sql))?;
    let tokens: Vec<TokenWithSpan> = rewrite_tokens(tokens)
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let st = Stmt { sql, tokens };
    let mut statements = Parser::new(&dialect)
        .with_tokens_with_locations(st.tokens.clone())
        .parse_statements()
        .map_err(|e| st.source().failure(parse_error_from(e, sql)))?;
    let result = match statements.as_slice() {
        // A subquery or window function fails in the expression converter: it is
        // beyond the scan, not an error in the statement.
        [Statement::Query(q)] => plan_query(&st, q).map_err(|f| {
            let at = st.subquery_or_window();
            if f.beyond_scan || !at.is_known() {
                f
            } else {
                st.beyond_scan(
                    format!("subqueries and window functions are not supported ({SUPPORTED})"),
                    at,
                )
            }
        }),
        [] => Err(st.error(format!("empty statement ({SUPPORTED})"), Span::NONE)),
        [Statement::Explain { .. }] => Err(st.beyond_scan(
            format!("EXPLAIN is not supported ({SUPPORTED})"),
            st.tokens.first().map_or(Span::NONE, |t| span(t.span)),
        )),
        [_] => Err(st.error(
            format!("only SELECT statements are supported ({SUPPORTED})"),
            st.tokens.first().map_or(Span::NONE, |t| span(t.span)),
        )),
        [_, second, ..] => Err(st.error("one statement at a time", st.span_of(second))),
    };
    if st.tokens.len() > 1000 {
        // A long chain of operators makes a tree as deep as it is long, and dropping
        // sqlparser's tree recurses: leave it to the end of the process.
        std::mem::forget(std::mem::take(&mut statements));
    }
    result
}

fn plan_query(st: &Stmt, q: &ast::Query) -> CliResult<Plan> {
    if q.with.is_some() {
        return Err(st.unsupported("WITH", st.keyword(Keyword::WITH)));
    }
    let select = match q.body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::SetOperation { op, .. } => {
            let k = match op {
                ast::SetOperator::Union => Keyword::UNION,
                ast::SetOperator::Except => Keyword::EXCEPT,
                ast::SetOperator::Intersect => Keyword::INTERSECT,
                ast::SetOperator::Minus => Keyword::MINUS,
            };
            return Err(st.unsupported(&op.to_string(), st.keyword(k)));
        }
        SetExpr::Query(_) => {
            return Err(st.unsupported("a parenthesized query", Span::NONE));
        }
        _ => return Err(st.unsupported("this kind of query", Span::NONE)),
    };
    if q.order_by.is_some() {
        return Err(st.unsupported("ORDER BY", st.keyword(Keyword::ORDER)));
    }
    if q.fetch.is_some() {
        return Err(st.unsupported("FETCH", st.keyword(Keyword::FETCH)));
    }
    if !q.locks.is_empty() || q.for_clause.is_some() {
        return Err(st.unsupported("FOR", st.keyword(Keyword::FOR)));
    }
    if q.settings.is_some() || q.format_clause.is_some() || !q.pipe_operators.is_empty() {
        return Err(st.unsupported("this clause", Span::NONE));
    }
    let (mut limit, mut offset) = (None, 0);
    match &q.limit_clause {
        None => {}
        Some(LimitClause::LimitOffset {
            limit: l,
            offset: o,
            limit_by,
        }) => {
            if let Some(e) = limit_by.first() {
                return Err(st.unsupported("LIMIT BY", st.span_of(e)));
            }
            if let Some(l) = l {
                limit = Some(row_count(st, l, "LIMIT")?);
            }
            if let Some(o) = o {
                offset = row_count(st, &o.value, "OFFSET")?;
            }
        }
        Some(LimitClause::OffsetCommaLimit {
            offset: o,
            limit: l,
        }) => {
            limit = Some(row_count(st, l, "LIMIT")?);
            offset = row_count(st, o, "OFFSET")?;
        }
    }

    match &select.distinct {
        Some(Distinct::Distinct) | Some(Distinct::On(_)) => {
            return Err(st.unsupported("DISTINCT", st.token_after(select.select_token.0.span)))
        }
        Some(Distinct::All) | None => {}
    }
    if select.top.is_some() {
        return Err(st.unsupported("TOP", st.keyword(Keyword::TOP)));
    }
    if select.into.is_some() {
        return Err(st.unsupported("INTO", st.keyword(Keyword::INTO)));
    }
    let group_by = match &select.group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(e, m) => !e.is_empty() || !m.is_empty(),
    };
    if group_by {
        return Err(st.unsupported("GROUP BY", st.keyword(Keyword::GROUP)));
    }
    if select.having.is_some() {
        return Err(st.unsupported("HAVING", st.keyword(Keyword::HAVING)));
    }
    if !select.named_window.is_empty() {
        return Err(st.unsupported("WINDOW", st.keyword(Keyword::WINDOW)));
    }
    if select.qualify.is_some() {
        return Err(st.unsupported("QUALIFY", st.keyword(Keyword::QUALIFY)));
    }
    if !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.connect_by.is_empty()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
        || !select.sort_by.is_empty()
        || select.exclude.is_some()
        || select.value_table_mode.is_some()
    {
        return Err(st.unsupported("this clause", Span::NONE));
    }
    let path = table_path(st, &select.from)?;

    let source = st.source();
    let predicate = match &select.selection {
        Some(w) => {
            let expr = expr_from_ast(w, st.sql).map_err(|e| source.failure(e))?;
            if let Some(agg) = find_aggregate(&expr) {
                return Err(st.error("aggregates are not allowed in WHERE", agg.span));
            }
            Some(Predicate {
                expr,
                source: source.clone(),
            })
        }
        None => None,
    };

    // The select list: `count(*)` alone, or expressions and `*`.
    let mut count = None;
    let mut items = Vec::new();
    for item in &select.projection {
        let (e, alias) = match item {
            SelectItem::Wildcard(_) => {
                items.push(Selected::All);
                continue;
            }
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
            other => {
                return Err(st.error(
                    format!("unsupported select list item ({SUPPORTED})"),
                    st.span_of(other),
                ))
            }
        };
        if is_count_star(e) {
            count = Some((
                alias.unwrap_or_else(|| "count_star()".into()),
                st.span_of(e),
            ));
            continue;
        }
        if let Some(name) = top_aggregate(e) {
            return Err(st.unsupported(&format!("the aggregate {name}()"), st.span_of(e)));
        }
        let expr = expr_from_ast(e, st.sql).map_err(|e| source.failure(e))?;
        if let Some(agg) = find_aggregate(&expr) {
            let name = match &agg.kind {
                ExprKind::Call { name, .. } => name.clone(),
                _ => String::new(),
            };
            return Err(st.unsupported(&format!("the aggregate {name}()"), agg.span));
        }
        items.push(Selected::Expr(expr, alias));
    }
    let count = match count {
        Some((name, _)) if items.is_empty() => Some(name),
        Some((_, at)) => {
            return Err(st.beyond_scan(
                format!(
                    "count(*) must be the only item of the select list, as there is no \
                     GROUP BY ({SUPPORTED})"
                ),
                at,
            ))
        }
        None => None,
    };
    let all = items.len() == 1 && matches!(items[0], Selected::All);
    Ok(Plan {
        path,
        predicate,
        select: (!all && count.is_none()).then_some((items, source)),
        count,
        limit,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(sql: &str) -> String {
        match plan(sql) {
            Ok(_) => panic!("{sql} was accepted"),
            Err(f) => f.message,
        }
    }

    #[test]
    fn statements() {
        let p = plan(
            "SELECT a, f(b, c) AS x FROM 'd/*.parquet' WHERE a < 'limit' AND (b > 1) LIMIT 5;",
        )
        .unwrap();
        assert_eq!(p.path, "d/*.parquet");
        assert_eq!(p.limit, Some(5));
        assert_eq!(p.select.as_ref().unwrap().0.len(), 2);
        assert!(p.predicate.is_some());

        let p = plan("select *\nfrom 'f.parquet' offset 3").unwrap();
        assert!(p.select.is_none() && p.predicate.is_none());
        assert_eq!((p.limit, p.offset), (None, 3));

        for (sql, path) in [
            ("SELECT * FROM lineitem.parquet", "lineitem.parquet"),
            ("SELECT * FROM \"f.parquet\"", "f.parquet"),
            ("SELECT * FROM read_parquet('d/*.parquet')", "d/*.parquet"),
            ("SELECT * FROM f", "f"),
        ] {
            assert_eq!(plan(sql).unwrap().path, path, "{sql}");
        }
        let p = plan("SELECT count(*) AS n FROM 'f' LIMIT 2").unwrap();
        assert_eq!(p.count.as_deref(), Some("n"));
        let p = plan("SELECT i, n IS DISTINCT FROM 5 AS v FROM 'f.parquet'").unwrap();
        assert_eq!(p.select.unwrap().0.len(), 2);
    }

    #[test]
    fn unsupported_clauses_are_named() {
        for (sql, clause) in [
            ("SELECT DISTINCT x FROM 'f'", "DISTINCT is not supported"),
            ("SELECT x FROM 'f' ORDER BY x", "ORDER BY is not supported"),
            ("SELECT x FROM 'f' GROUP BY x", "GROUP BY is not supported"),
            (
                "SELECT sum(i) FROM 'f'",
                "the aggregate sum() is not supported",
            ),
            (
                "SELECT 1 + max(i) FROM 'f'",
                "the aggregate max() is not supported",
            ),
            (
                "SELECT x FROM 'f' JOIN 'g' ON true",
                "JOIN is not supported",
            ),
            ("SELECT x FROM 'f', 'g'", "more than one table"),
            (
                "SELECT x FROM 'f' UNION SELECT x FROM 'g'",
                "UNION is not supported",
            ),
            (
                "SELECT count(*), x FROM 'f'",
                "count(*) must be the only item",
            ),
            ("DELETE FROM 'f'", "only SELECT statements"),
            ("SELECT x FROM 'f' LIMIT -1", "LIMIT takes a number"),
        ] {
            let m = err(sql);
            assert!(m.contains(clause), "{sql}: {m}");
            assert!(m.starts_with("in the statement:"), "{sql}: {m}");
        }
        // The caret is under the clause.
        let m = err("SELECT DISTINCT x FROM 'f'");
        assert!(
            m.ends_with("  SELECT DISTINCT x FROM 'f'\n         ^^^^^^^^"),
            "{m}"
        );
    }
}
